"""One line of advice for every AWS region or credentials error an operator command can meet.

Why: botocore's own words ("You must specify a region.", "Unable to locate credentials") say what is
missing, not where these commands look for it or how to give it.
"""

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ProfileNotFound,
)

CHECK = "check with `aws sts get-caller-identity`"
REGION = (
    "no AWS region: pass --region, or set region in samconfig.toml (the first `make deploy` saves it), "
    "or export AWS_REGION"
)
CREDENTIALS = (
    f"no usable AWS credentials: `aws configure` or `aws sso login`, then AWS_PROFILE or --profile; {CHECK}"
)
_REFUSED_CREDENTIALS = frozenset(
    {
        "ExpiredToken",
        "ExpiredTokenException",
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "SignatureDoesNotMatch",
        "InvalidSignatureException",
        "AuthFailure",
    }
)
_DENIED = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation"})


def hint_for(exc: BotoCoreError | ClientError, region: str | None) -> str:
    """What to do about ``exc``, naming the region the command used."""
    where = f"region {region}" if region else "no region"
    if isinstance(exc, NoRegionError):
        return REGION
    if isinstance(exc, NoCredentialsError | PartialCredentialsError | ProfileNotFound):
        return CREDENTIALS
    if isinstance(exc, EndpointConnectionError):
        return f"cannot reach AWS in {where}: is the region name right (--region)? is the network up?"
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        if code in _REFUSED_CREDENTIALS:
            return f"AWS refused the credentials (expired or wrong): renew them (`aws sso login`); {CHECK}"
        if code in _DENIED:
            return (
                f"the AWS identity lacks a permission for this command in {where} "
                "(docs/operations.md, 'Least privilege', lists the operator's), or the stack is in "
                f"another account or region: --profile / --region; {CHECK}"
            )
    if "credential" in str(exc).lower() or "token" in str(exc).lower():
        return CREDENTIALS
    return f"the command used {where}; if that is not the stack's, pass --region / --profile; {CHECK}"
