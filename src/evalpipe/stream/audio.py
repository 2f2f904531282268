"""Audio input of the long-form driver: whole recordings read from WAV files and handed to an agent
in chunks with their timestamps.

* :class:`AudioChunk`: the samples of ``[start, end)`` seconds of a talk's recording (mono float32 in
  [-1, 1], channels averaged) and their rate.
* :func:`read_wav`: PCM WAV (8, 16, 24 or 32 bit) with the standard library's ``wave``; other formats
  through soundfile (the ``speech`` extra) when it is installed.  Errors name the file.
* :func:`talk_wavs`: each talk's recording from an audio definition (``wav`` relative to the
  definition's folder, as simulstream's audio definitions name them).
* :func:`synthesize`: a stand-in recording for a talk with no audio of its own (the demo): every
  source word is a 440 Hz tone burst filling 80 % of its share of its sentence's span, silence
  elsewhere.  It is no speech; it gives an audio agent real samples on the talk's clock.
"""
from __future__ import annotations

import struct
import wave
from pathlib import Path
from typing import Any, Dict, NamedTuple, Sequence, Tuple

from evalpipe.corpus import write_atomically
from evalpipe.errors import InputError

RATE = 16000


class AudioChunk(NamedTuple):
    """Samples of ``[start, end)`` s of a talk's recording (mono float32) at ``rate`` Hz."""

    samples: Any  # numpy.ndarray of float32
    rate: int
    start: float
    end: float


def read_wav(path: str) -> Tuple[Any, int]:
    """(mono float32 samples, rate) of a recording (see the module docstring)."""
    import numpy as np

    try:
        with wave.open(str(path), "rb") as handle:
            width, channels, rate = handle.getsampwidth(), handle.getnchannels(), handle.getframerate()
            raw = handle.readframes(handle.getnframes())
    except FileNotFoundError:
        raise InputError("expected a recording (the audio definition's wav), found no file", str(path)) from None
    except (wave.Error, EOFError) as exc:
        return _read_other(path, exc)
    if width == 3:  # 24-bit: widen each sample to 32 bits
        bytes3 = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3)
        raw = np.concatenate([np.zeros((len(bytes3), 1), np.uint8), bytes3], axis=1).tobytes()
        width = 4
    kinds = {1: np.uint8, 2: np.int16, 4: np.int32}
    data = np.frombuffer(raw, dtype=kinds[width]).astype(np.float32)
    data = (data - 128) / 128 if width == 1 else data / float(2 ** (8 * width - 1))
    return data.reshape(-1, channels).mean(axis=1, dtype=np.float32), rate


def _read_other(path: str, why: Exception) -> Tuple[Any, int]:
    try:
        import soundfile
    except ImportError:
        raise InputError(f"expected a PCM WAV file ({why}); other formats need pip install 'evalpipe[speech]'",
                         str(path)) from None
    try:
        data, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except RuntimeError as exc:
        raise InputError(f"expected a recording soundfile can read ({exc})", str(path)) from None
    return data.mean(axis=1), rate


def talk_wavs(audio_definition: str) -> Dict[str, Path]:
    """Each talk's recording, by talk name (the ``wav`` stem), in the definition's order."""
    from evalpipe.stream.files import _yaml, stem

    folder = Path(audio_definition).parent
    out: Dict[str, Path] = {}
    for entry in _yaml(audio_definition):
        if isinstance(entry, dict) and "wav" in entry:
            out.setdefault(stem(str(entry["wav"])), folder / str(entry["wav"]))
    return out


def synthesize(path: Path, sentences: Sequence[Tuple[str, Any]], rate: int = RATE) -> None:
    """Write a stand-in recording of a talk's ``(source text, RefSentence)`` pairs (module docstring)."""
    import numpy as np

    end = max(ref.offset + ref.duration for _, ref in sentences)
    samples = np.zeros(int(round(end * rate)), dtype=np.int16)
    for text, ref in sentences:
        words = text.split()
        share = ref.duration / max(1, len(words))
        for k in range(len(words)):
            a = int((ref.offset + k * share) * rate)
            b = int((ref.offset + (k + 0.8) * share) * rate)
            samples[a:b] = (8000 * np.sin(2 * np.pi * 440 * np.arange(b - a) / rate)).astype(np.int16)
    write_atomically(str(path), pcm16_wav(samples.tobytes(), rate))


def pcm16_wav(data: bytes, rate: int) -> bytes:
    """A mono 16-bit PCM WAV file of little-endian samples (the 44-byte RIFF header, then the data)."""
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + len(data), b"WAVE", b"fmt ", 16, 1, 1, rate, 2 * rate,
                         2, 16, b"data", len(data))
    return header + data
