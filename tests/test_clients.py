"""Third-party clients of the line protocol, obtained from the package registry at test time and run
unchanged against `evalpipe serve` through real pipes.

pycocoevalcap 1.2: ``pip download --no-deps pycocoevalcap==1.2``; its METEOR client
(``pycocoevalcap/meteor/meteor.py``, unmodified) is taken from the wheel and run in a child Python
whose ``PATH`` starts with an ``evalpipe shim`` named ``java``: the client starts ``java -jar ...
meteor-1.5.jar - - -stdio -l en -norm`` and gets ``evalpipe serve`` instead.  Nothing of it is copied
into the project; the download is cached in pytest's cache folder.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import sacrebleu

from conftest import child_env, script

TESTS = Path(__file__).parent
NEWS = TESTS / "data" / "wmt21.news"
TIMEOUT = 300

DRIVER = """
import json, sys
from pycocoevalcap.meteor.meteor import Meteor
gts, res = json.load(open(sys.argv[1], encoding="utf-8"))
meteor = Meteor()
score, scores = meteor.compute_score(gts, res)
print(json.dumps([score, scores]))
"""


@pytest.fixture(scope="session")
def pycocoevalcap(request):
    """A folder holding pycocoevalcap 1.2's Python files, from the wheel on the package registry."""
    folder = Path(request.config.cache.mkdir("pycocoevalcap-1.2"))
    client = folder / "pycocoevalcap" / "meteor" / "meteor.py"
    if not client.exists():
        wheels = folder / "wheel"
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                        "pycocoevalcap==1.2", "-d", str(wheels)], check=True, timeout=TIMEOUT,
                       stdout=subprocess.DEVNULL)
        wheel = next(wheels.glob("pycocoevalcap-1.2-*.whl"))
        with zipfile.ZipFile(wheel) as archive:  # its Python files; the 100 MB of jars are not needed
            archive.extractall(folder, [n for n in archive.namelist() if n.endswith(".py")])
        wheel.unlink()
    return folder


def segments(n):
    """``n`` real WMT21 en-de segments: a system's output and reference A."""
    system = sorted((NEWS / "system-outputs" / "en-de").glob("*.txt"))[0]
    hyps = system.read_text(encoding="utf-8").splitlines()[:n]
    refs = (NEWS / "references" / "en-de.refA.txt").read_text(encoding="utf-8").splitlines()[:n]
    return hyps, refs


def run_client(folder, tmp_path, metric, hyps, refs):
    shims = tmp_path / f"shim-{metric}"
    subprocess.run([script("evalpipe"), "shim", str(shims), "-m", metric, "--dialect", "pycocoevalcap"],
                   check=True, env=child_env(), stdout=subprocess.DEVNULL, timeout=TIMEOUT)
    data = tmp_path / "data.json"
    gts = {str(i): [r] for i, r in enumerate(refs)}
    res = {str(i): [h] for i, h in enumerate(hyps)}
    data.write_text(json.dumps([gts, res]), encoding="utf-8")
    env = child_env()
    env["PATH"] = f"{shims}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(folder)
    done = subprocess.run([sys.executable, "-c", DRIVER, str(data)], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT)  # a hang (the client's lock never released) fails here
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("metric", ["bleu", "chrf"])
@pytest.mark.parametrize("n", [1, 50])
def test_pycocoevalcap_meteor_client_unchanged(pycocoevalcap, tmp_path, metric, n):
    """Per-sentence scores equal sacrebleu's sentence scores and the aggregate equals its corpus score."""
    hyps, refs = segments(n)
    score, scores = run_client(pycocoevalcap, tmp_path, metric, hyps, refs)
    sent = [h.replace("|||", "").replace("  ", " ") for h in hyps]  # what the client sends
    anchor = sacrebleu.BLEU() if metric == "bleu" else sacrebleu.CHRF()
    assert scores == [anchor.sentence_score(h, [r]).score for h, r in zip(sent, refs)]
    assert score == anchor.corpus_score(sent, [refs]).score


def test_shim_checks_the_metric_before_writing(tmp_path):
    done = subprocess.run([script("evalpipe"), "shim", str(tmp_path / "s"), "-m", "no_such_metric"],
                          capture_output=True, text=True, env=child_env(), timeout=TIMEOUT)
    assert done.returncode == 2 and "no_such_metric" in done.stderr and not (tmp_path / "s" / "java").exists()
