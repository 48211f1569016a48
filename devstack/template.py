"""Create the template's stateful resources (tables, queues, secret) in an embedded AWS.

Why read ``template.yaml`` rather than declare resources again: a table key, a
TTL attribute or a redrive policy changed in the template changes the tests
and the local stack with it.
"""

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import boto3

from ops.template import load_template

# The secret the local stack and the tests sign with (README: "local development secret").
LOCAL_WEBHOOK_SECRET = "replyonce-local-webhook-secret"  # noqa: S105 - a documented development value
LOCAL_PREVIOUS_WEBHOOK_SECRET = "replyonce-local-previous-webhook-secret"  # noqa: S105
LOCAL_API_KEY = "replyonce-local-api-key"
# What each of the template's secrets holds locally, by logical id (template.yaml creates them empty;
# `python -m ops` writes them in a deployed stack). The webhook's secret never holds the API key.
LOCAL_SECRET_VALUES: dict[str, dict[str, str]] = {
    "NylasSecrets": {
        "webhook_secret": LOCAL_WEBHOOK_SECRET,
        "previous_webhook_secret": LOCAL_PREVIOUS_WEBHOOK_SECRET,
    },
    "NylasApiKeySecret": {"api_key": LOCAL_API_KEY},
}


def declared_variables(template: dict[str, Any], logical_id: str) -> dict[str, Any]:
    """The variables a function declares (``Globals`` and its own ``Environment``), values unresolved.

    Why unresolved: ``make serve`` needs the names before any resource exists, to take the shell's
    value of each one the way ``sam local invoke`` does.
    """
    variables = dict(
        template.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
    )
    variables.update(
        template["Resources"][logical_id]["Properties"].get("Environment", {}).get("Variables", {})
    )
    return variables


@dataclass
class LocalResources:
    """Physical names of what :func:`create_resources` made, by logical id."""

    tables: dict[str, str] = field(default_factory=dict)
    queues: dict[str, str] = field(default_factory=dict)
    queue_arns: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)
    buckets: dict[str, str] = field(default_factory=dict)
    template: dict[str, Any] = field(default_factory=dict)

    def function_environment(self, logical_id: str) -> dict[str, str]:
        """The environment the template gives a function, resolved against these resources."""
        variables = declared_variables(self.template, logical_id)
        return {name: str(self.resolve(value)) for name, value in variables.items()}

    def resolve(self, value: Any) -> Any:
        """Resolve ``Ref`` to our resources and parameter defaults; ``GetAtt`` to ARNs and names."""
        if isinstance(value, dict) and "Ref" in value:
            name = value["Ref"]
            if name in self.tables:
                return self.tables[name]
            if name in self.queues:
                return self.queues[name]
            if name in self.secrets:
                return self.secrets[name]
            if name in self.buckets:
                return self.buckets[name]
            parameter = self.template.get("Parameters", {}).get(name)
            if parameter is not None:
                return parameter.get("Default", "")
            raise KeyError(f"cannot resolve Ref {name} locally")
        if isinstance(value, dict) and "Fn::GetAtt" in value:
            name, attribute = value["Fn::GetAtt"]
            if attribute == "Arn" and name in self.queue_arns:
                return self.queue_arns[name]
            if attribute == "QueueName" and name in self.queues:
                return self.queues[name].rsplit("/", 1)[1]
            raise KeyError(f"cannot resolve GetAtt {name}.{attribute} locally")
        return value


def _queue_attributes(properties: dict[str, Any], resources: LocalResources) -> dict[str, str]:
    attributes: dict[str, str] = {}
    for name in (
        "VisibilityTimeout",
        "MessageRetentionPeriod",
        "MaximumMessageSize",
        "DelaySeconds",
        "ReceiveMessageWaitTimeSeconds",
    ):
        if name in properties:
            attributes[name] = str(resources.resolve(properties[name]))
    if "RedrivePolicy" in properties:
        policy = properties["RedrivePolicy"]
        attributes["RedrivePolicy"] = json.dumps(
            {
                "deadLetterTargetArn": resources.resolve(policy["deadLetterTargetArn"]),
                "maxReceiveCount": int(policy["maxReceiveCount"]),
            }
        )
    return attributes


IN_SERVICE_SECONDS = 86_400


def put_in_service(resources: LocalResources, session: boto3.session.Session | None = None) -> None:
    """Date the state table's beginning (its ``table#began`` item) a day back, as a deployed table's is.

    Why: a thread item created within ``mailbox_settle_seconds`` of the table's beginning may stand for
    one a lost table held, so its bursts wait (``replyonce.core.arrival.state_settles_in``); the local
    stack and the tests start from a table nothing was lost from. Emptying it (the state-loss drill)
    makes it new.
    """
    from replyonce.adapters.state_items import table_began_item

    began_ms = int((time.time() - IN_SERVICE_SECONDS) * 1000)
    client = (session or boto3.session.Session()).client("dynamodb")
    client.put_item(TableName=resources.tables["StateTable"], Item=table_began_item(began_ms))


def create_resources(
    prefix: str = "replyonce", session: boto3.session.Session | None = None
) -> LocalResources:
    """Create every table, queue and secret of the template; return their names.

    Queues are created dead-letter queues first (a redrive policy names its
    target's ARN). The secrets get the local development values.
    """
    session = session or boto3.session.Session()
    template = load_template()
    resources = LocalResources(template=template)
    dynamodb = session.client("dynamodb")
    sqs = session.client("sqs")
    secretsmanager = session.client("secretsmanager")
    definitions = template["Resources"]

    queues = [name for name, r in definitions.items() if r["Type"] == "AWS::SQS::Queue"]
    queues.sort(key=lambda name: "RedrivePolicy" in definitions[name].get("Properties", {}))
    for name in queues:
        properties = definitions[name].get("Properties", {})
        url = sqs.create_queue(
            QueueName=f"{prefix}-{name}", Attributes=_queue_attributes(properties, resources)
        )["QueueUrl"]
        resources.queues[name] = url
        resources.queue_arns[name] = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]

    for name, definition in definitions.items():
        properties = definition.get("Properties", {})
        if definition["Type"] == "AWS::DynamoDB::Table":
            table = _create_table(dynamodb, f"{prefix}-{name}", properties)
            ttl = properties.get("TimeToLiveSpecification")
            if ttl:
                dynamodb.update_time_to_live(
                    TableName=table,
                    TimeToLiveSpecification={
                        "AttributeName": ttl["AttributeName"],
                        "Enabled": ttl["Enabled"],
                    },
                )
            resources.tables[name] = table
        elif definition["Type"] == "AWS::SecretsManager::Secret":
            if name not in LOCAL_SECRET_VALUES:
                raise KeyError(f"template secret {name} has no local value in devstack.template")
            secret = secretsmanager.create_secret(
                Name=f"{prefix}-{name}", SecretString=json.dumps(LOCAL_SECRET_VALUES[name])
            )
            resources.secrets[name] = secret["ARN"]
        elif definition["Type"] == "AWS::S3::Bucket":
            # Private and unencrypted locally: moto's KMS would add nothing the tests could check.
            bucket = f"{prefix}-{name}".lower()
            session.client("s3").create_bucket(Bucket=bucket)
            resources.buckets[name] = bucket
    return resources


def create_active_region_table(name: str, session: boto3.session.Session | None = None) -> str:
    """The template's active-Region table (``ActiveRegionTable``), as one embedded table named ``name``.

    Why one table for every "Region" of a local run: the template makes it a multi-Region strongly
    consistent global table, whose strongly consistent reads in any Region return the last write
    of any Region — which one table every Region reads models exactly. (``create_resources`` leaves
    it out: the template creates it only in a deployment across Regions.)
    """
    session = session or boto3.session.Session()
    properties = load_template()["Resources"]["ActiveRegionTable"]["Properties"]
    return _create_table(session.client("dynamodb"), name, properties)


def create_restored_state_table(dynamodb: Any, name: str, items: Iterable[dict[str, Any]]) -> str:
    """What ``restore-table-to-point-in-time`` makes of a backup of the state table: a table of its own,
    named ``name``, with the template's ``StateTable`` keys, holding ``items`` (for ``make restore-state``
    to put back). Returns ``name``."""
    _create_table(dynamodb, name, load_template()["Resources"]["StateTable"]["Properties"])
    for item in items:
        dynamodb.put_item(TableName=name, Item=item)
    return name


def _create_table(dynamodb: Any, name: str, properties: dict[str, Any]) -> str:
    """One embedded table named ``name`` with a template table's keys and billing mode."""
    dynamodb.create_table(
        TableName=name,
        AttributeDefinitions=properties["AttributeDefinitions"],
        KeySchema=properties["KeySchema"],
        BillingMode=properties.get("BillingMode", "PAY_PER_REQUEST"),
    )
    return name
