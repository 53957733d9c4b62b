"""What the review benchmarks (review-memory.sh, review-shapes.sh) share: the largest object of
a shape that stays within a size."""
import json


def sized(target, make, hi):
    """make(n) for the largest n below hi whose JSON is at most target bytes (a binary search:
    make(n) grows with n)."""
    lo = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if len(json.dumps(make(mid))) <= target:
            lo = mid
        else:
            hi = mid
    return make(lo)
