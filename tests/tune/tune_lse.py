"""tune_lse: sizes for bench/tune.py's CPU test (tests/run.sh group_tune); never timed."""
SIZES = [dict(R=4096, C=8192)]
CHECK = [dict(R=3, C=8191)]
