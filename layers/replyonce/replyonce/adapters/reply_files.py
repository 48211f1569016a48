"""The files of a reply, kept in the stack's bucket from before the intent is stored until it is sent.

Why S3: a reply's files (up to 25 MB) do not fit a DynamoDB item (400 KB),
and the stored intent must send the same bytes after any crash. Each file is
an object ``replies/{intent id}/{sha256}``: written before the intent naming
it (an intent never names a file that is not there), read back for every
attempt and checked against its digest. The bucket encrypts with the stack's
KMS key and expires objects after ``ReplyFilesRetentionDays`` (template.yaml):
no delete is ever needed, and the replier's role may not delete.
"""

from typing import Any

from botocore.exceptions import ClientError

from replyonce.exceptions import ReplyFileLost
from replyonce.outgoing import digest

PREFIX = "replies/"
"""Every object of a reply's file is under it (the role's permissions and the lifecycle rule name it)."""


def object_key(intent_id: str, file_digest: str) -> str:
    """Where a file of an intent is kept: the intent, then the file's SHA-256."""
    return f"{PREFIX}{intent_id}/{file_digest}"


class S3ReplyFiles:
    """:class:`replyonce.ports.ReplyFiles` on an S3 bucket (``REPLY_FILES_BUCKET``).

    Parameters
    ----------
    bucket:
        The bucket's name.
    s3_client:
        A boto3 ``s3`` client (moto's in tests and the local stack).
    """

    def __init__(self, bucket: str, s3_client: Any) -> None:
        self._bucket = bucket
        self._s3 = s3_client

    def put(self, intent_id: str, content: bytes, content_type: str) -> str:
        file_digest = digest(content)
        # The bucket's default encryption is the stack's KMS key (template.yaml); it is not repeated
        # here, so a local bucket without a key works the same.
        self._s3.put_object(
            Bucket=self._bucket,
            Key=object_key(intent_id, file_digest),
            Body=content,
            ContentType=content_type,
            ChecksumAlgorithm="SHA256",
        )
        return file_digest

    def get(self, intent_id: str, file_digest: str) -> bytes:
        key = object_key(intent_id, file_digest)
        try:
            content = self._s3.get_object(Bucket=self._bucket, Key=key)["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
                raise ReplyFileLost(f"intent {intent_id}: file {file_digest} is not in the bucket") from exc
            raise
        if digest(content) != file_digest:
            raise ReplyFileLost(f"intent {intent_id}: file {file_digest} is not the bytes it names")
        return content
