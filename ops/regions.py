"""Whether a Region name is one AWS has: the partitions' lists in botocore's endpoint data, offline.

Why: ``make deploy --region mars-north-9 --dry-run`` printed a plan for a Region that does not exist,
and a real run would fail only after the build, in botocore's words about an endpoint it cannot reach.
The list is the one botocore ships (``endpoints.json``: every partition, aws, aws-cn, aws-us-gov ...),
read without a request; a Region newer than the installed botocore is refused with that said.
"""

import functools

import botocore
import botocore.session

from ops.errors import ConfigurationError

# Every Region has CloudFormation, which every command here starts from (the stack).
_SERVICE = "cloudformation"


@functools.cache
def known_regions() -> frozenset[str]:
    """Every Region of every partition botocore's endpoint data names."""
    session = botocore.session.get_session()
    regions: set[str] = set()
    for partition in session.get_available_partitions():
        regions.update(session.get_available_regions(_SERVICE, partition_name=partition))
    return frozenset(regions)


def check_region(region: str, source: str) -> str:
    """``region`` if AWS has it; else :class:`ConfigurationError` naming where it came from (``source``)."""
    if region in known_regions():
        return region
    close = sorted(r for r in known_regions() if r.split("-")[0] == region.split("-")[0])[:4]
    examples = ", ".join(close or ["us-east-1", "eu-west-1", "ap-southeast-2"])
    raise ConfigurationError(
        f"{source} {region!r} is not an AWS Region (botocore {botocore.__version__} knows "
        f"{len(known_regions())}, e.g. {examples}); check its spelling, or upgrade botocore for a new one"
    )
