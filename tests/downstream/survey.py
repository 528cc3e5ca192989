"""Run every case x transform (KNOWN_OURS included) and print what happens, with the library and
engine frames of each failure: `python3 tests/downstream/survey.py [name-substring]`.
Not a test; the tool for finding causes and for seeing which KNOWN_OURS entries now pass."""
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, ".."), os.path.join(HERE, "..", "..", "src")]
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import ds_harness as harness  # noqa: E402
from ds_registry import ALL_CASES, KNOWN_OURS  # noqa: E402


def frames(exc):
    tb = traceback.extract_tb(exc.__traceback__)
    lib = [f for f in tb if "site-packages" in f.filename]
    ours = [f for f in tb if "/src/" in f.filename]
    out = []
    if lib:
        f = lib[-1]
        out.append(f"lib {f.filename.split('site-packages/')[-1]}:{f.lineno} `{f.line}`")
    if ours:
        f = ours[-1]
        out.append(f"ours {f.filename.split('/src/')[-1]}:{f.lineno}")
    return " | ".join(out)


def main(pattern=""):
    counts = {t: [0, 0] for t in harness.TRANSFORMS}
    for case in ALL_CASES:
        if pattern not in case.name:
            continue
        for t in harness.TRANSFORMS:
            if case.mode(t) == harness.NA:
                continue
            known = (case.name, t) in KNOWN_OURS
            try:
                err = harness.run(case, t)
                status, detail = "PASS", (f"raises {type(err).__name__} || {frames(err)}" if err else "")
                counts[t][0] += 1
            except Exception as e:  # noqa: BLE001 -- a survey reports everything
                status = "FAIL"
                counts[t][1] += 1
                detail = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''} || {frames(e)}"
            mark = " (KNOWN_OURS)" if known else ""
            print(f"{status} {case.name} [{t}/{case.mode(t)}]{mark} {detail}", flush=True)
    print({t: f"{p} pass / {f} fail" for t, (p, f) in counts.items()})


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
