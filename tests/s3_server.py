"""An S3 API server for tests: moto's server mode in this process (a thread), on a free port of 127.0.0.1.

Example::

    with MotoS3() as s3:
        s3.client.create_bucket(Bucket="landing")
        config = {"store.url": s3.url, **s3.credentials}
"""

from __future__ import annotations

import socket
from typing import Any

import boto3
from moto.server import ThreadedMotoServer

REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MotoS3:
    """A running moto S3 server; ``client`` is a boto3 client of it, ``credentials`` the sink's keys."""

    credentials = {"aws.access.key.id": "testing", "aws.secret.access.key": "testing", "s3.region": REGION}

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.client: Any = None

    def __enter__(self) -> MotoS3:
        self.server.start()
        self.client = boto3.client("s3", endpoint_url=self.url, region_name=REGION,
                                   aws_access_key_id="testing", aws_secret_access_key="testing")
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    def objects(self, bucket: str) -> dict[str, bytes]:
        """Every object of ``bucket`` (latest versions): key → content."""
        out = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for item in page.get("Contents", []):
                out[item["Key"]] = self.client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
        return out

    def keys(self, bucket: str) -> list[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    def versions(self, bucket: str) -> dict[str, int]:
        """How many versions each key has (a versioned bucket): more than one means it was overwritten."""
        counts: dict[str, int] = {}
        for page in self.client.get_paginator("list_object_versions").paginate(Bucket=bucket):
            for item in page.get("Versions", []):
                counts[item["Key"]] = counts.get(item["Key"], 0) + 1
        return counts
