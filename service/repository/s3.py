"""`Blobs` on S3 and S3-compatible servers (SeaweedFS, MinIO, Ceph RGW), with boto3.

Why boto3/botocore: it is AWS's own SDK, released weekly, and resolves credentials exactly
as every AWS tool does — environment variables, shared config/credentials files and
profiles, web identity (`AWS_WEB_IDENTITY_TOKEN_FILE` + `AWS_ROLE_ARN`: EKS IRSA / pod
identity), container and instance metadata — and the endpoint from `AWS_ENDPOINT_URL` /
`AWS_ENDPOINT_URL_S3`. Its standard retry mode retries throttling and 5xx answers with
backoff; PutObject's `IfMatch`/`IfNoneMatch` give the conditional writes the manifest needs.

Errors become `StoreUnavailable` naming the bucket, prefix and endpoint — never a key or a
secret (botocore's messages carry neither).
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from ..errors import BadRequest
from .blobs import Blob, PreconditionFailed, StoreDenied, StoreUnavailable

_DENIED = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "ExpiredToken",
           "InvalidToken", "InvalidClientTokenId", "UnrecognizedClientException"}
_PRECONDITION = {"PreconditionFailed", "ConditionalRequestConflict", "412"}
_MISSING = {"NoSuchKey", "404", "NotFound"}
_TRANSFER = TransferConfig(multipart_threshold=64 << 20, multipart_chunksize=16 << 20,
                           max_concurrency=8)


def parse_s3_url(url: str) -> tuple[str, str]:
    """s3://BUCKET[/PREFIX] → (bucket, prefix without slashes at the ends)."""
    if not url.startswith("s3://"):
        raise BadRequest(f"not an s3:// URL: {url!r}")
    bucket, _, prefix = url[5:].partition("/")
    if not bucket or "/" in bucket or not (3 <= len(bucket) <= 63):
        raise BadRequest(f"model store {url!r}: write s3://BUCKET/PREFIX (bucket: 3-63 chars)")
    return bucket, prefix.strip("/")


def endpoint_from_env(explicit: str | None = None) -> str | None:
    """The S3 endpoint: the setting, else AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL (None:
    AWS itself, or what the shared config file names)."""
    return (explicit or os.environ.get("AWS_ENDPOINT_URL_S3")
            or os.environ.get("AWS_ENDPOINT_URL") or None)


def _quiet_sdk_logs() -> None:
    """The SDK's DEBUG output carries signed request headers and bodies: never in our logs,
    whatever --log-level says."""
    for name in ("boto3", "botocore", "s3transfer", "urllib3"):
        logging.getLogger(name).setLevel(logging.WARNING)


class S3Blobs:
    def __init__(self, url: str, endpoint_url: str | None = None, retries: int = 5,
                 connect_timeout_s: float = 5.0, read_timeout_s: float = 60.0):
        self.bucket, self.prefix = parse_s3_url(url)
        _quiet_sdk_logs()
        endpoint = endpoint_from_env(endpoint_url)
        cfg = Config(retries={"mode": "standard", "max_attempts": retries},
                     connect_timeout=connect_timeout_s, read_timeout=read_timeout_s,
                     # path-style: S3-compatible servers at an IP or a single host name
                     s3={"addressing_style": "path" if endpoint else "auto"},
                     # checksums only where S3 requires them: many S3-compatible servers
                     # refuse the newer default (CRC trailers on every upload)
                     request_checksum_calculation="when_required",
                     response_checksum_validation="when_required",
                     user_agent_extra="hybridserve", max_pool_connections=16)
        self.client = boto3.session.Session().client("s3", endpoint_url=endpoint, config=cfg)
        self.endpoint = self.client.meta.endpoint_url
        where = f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"
        self.location = f"{where} at {self.endpoint}"

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def _error(self, e: Exception, what: str) -> Exception:
        if isinstance(e, ClientError):
            code = str(e.response.get("Error", {}).get("Code", ""))
            status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code in _PRECONDITION or status == 412:
                return PreconditionFailed(what)
            if code in _DENIED or status == 403:
                return StoreDenied(
                    f"model store {self.location}: {what} refused ({code or status}): check the "
                    "credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE or the "
                    "web identity role) and the bucket policy")
            if code == "NoSuchBucket":
                return StoreUnavailable(f"model store {self.location}: bucket "
                                        f"'{self.bucket}' does not exist")
            return StoreUnavailable(f"model store {self.location}: {what} failed: {code} "
                                    f"(HTTP {status})")
        if isinstance(e, NoCredentialsError):
            return StoreUnavailable(f"model store {self.location}: no AWS credentials found "
                                    "(environment, shared files, web identity or metadata)")
        return StoreUnavailable(f"model store {self.location} is unreachable ({what}): "
                                f"{type(e).__name__}: {e}"[:500])

    def list(self, prefix: str = "") -> list[Blob]:
        base = self._key("") if self.prefix else ""
        out = []
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=base + prefix)
            for page in pages:
                for o in page.get("Contents", ()):
                    out.append(Blob(o["Key"][len(base):], o["ETag"], o["Size"]))
        except (BotoCoreError, ClientError) as e:
            raise self._error(e, "list") from None
        return out

    def get(self, key: str) -> tuple[bytes, str] | None:
        try:
            r = self.client.get_object(Bucket=self.bucket, Key=self._key(key))
            return r["Body"].read(), r["ETag"]
        except ClientError as e:
            if str(e.response.get("Error", {}).get("Code", "")) in _MISSING:
                return None
            raise self._error(e, f"read of '{key}'") from None
        except BotoCoreError as e:
            raise self._error(e, f"read of '{key}'") from None

    def download(self, key: str, dest: Path) -> None:
        try:
            self.client.download_file(self.bucket, self._key(key), str(dest), Config=_TRANSFER)
        except (BotoCoreError, ClientError) as e:
            raise self._error(e, f"download of '{key}'") from None

    def put(self, key: str, data: bytes | Path, *, if_match: str | None = None,
            if_absent: bool = False) -> str:
        cond = {"IfMatch": if_match} if if_match else {"IfNoneMatch": "*"} if if_absent else {}
        try:
            if isinstance(data, Path) and not cond:
                self.client.upload_file(str(data), self.bucket, self._key(key), Config=_TRANSFER)
                return self.client.head_object(Bucket=self.bucket, Key=self._key(key))["ETag"]
            body = data.read_bytes() if isinstance(data, Path) else data
            r = self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=body, **cond)
            return r["ETag"]
        except (BotoCoreError, ClientError) as e:
            raise self._error(e, f"write of '{key}'") from None

    def delete(self, keys: list[str]) -> None:
        try:
            for i in range(0, len(keys), 1000):
                self.client.delete_objects(Bucket=self.bucket, Delete={
                    "Objects": [{"Key": self._key(k)} for k in keys[i:i + 1000]],
                    "Quiet": True})
        except (BotoCoreError, ClientError) as e:
            raise self._error(e, "delete") from None
