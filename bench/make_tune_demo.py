"""Write the tuning demo's data into the package: the first 300 segments of WMT21 news en-de (source,
reference A) and the outputs of ten of its MT systems, copied unchanged from ../shared/data/wmt21.news
(MTME layout of wmt-conference/wmt21-news-systems).  Run from the repository root:
``python bench/make_tune_demo.py``."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data" / "wmt21.news"
OUT = ROOT / "src" / "evalpipe" / "demo" / "wmt21-ende"
SYSTEMS = ["BUPT_rush", "Facebook-AI", "HuaweiTSC", "ICL", "NVIDIA-NeMo", "Online-W", "UEdin", "VolcTrans-AT",
           "VolcTrans-GLAT", "eTranslation"]
SEGMENTS = 300


def head(path: Path) -> str:
    return "".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:SEGMENTS])


def main() -> None:
    (OUT / "systems").mkdir(parents=True, exist_ok=True)
    (OUT / "src.en").write_text(head(SHARED / "sources" / "en-de.txt"), encoding="utf-8")
    (OUT / "ref.de").write_text(head(SHARED / "references" / "en-de.refA.txt"), encoding="utf-8")
    for name in SYSTEMS:
        (OUT / "systems" / f"{name}.de").write_text(head(SHARED / "system-outputs" / "en-de" / f"{name}.txt"),
                                                   encoding="utf-8")


if __name__ == "__main__":
    main()
