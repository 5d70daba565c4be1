"""The public Connect API: what connectors, converters, transformations and predicates are written against.

Example::

    >>> from connect_magics.api import ConfigDef, Importance, SourceRecord, Type
    >>> ConfigDef().define("topic", Type.STRING, importance=Importance.HIGH).parse({"topic": "t"})
    {'topic': 't'}
"""

from connect_magics.api.config import (
    NO_DEFAULT,
    AbstractConfig,
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigException,
    ConfigKey,
    ConfigValue,
    Importance,
    LambdaValidator,
    NonEmptyString,
    NonNullValidator,
    Password,
    Range,
    Recommender,
    Type,
    Validator,
    ValidList,
    ValidString,
    Width,
    config_infos,
)
from connect_magics.api.connector import (
    Connector,
    ConnectorContext,
    ConnectorTransactionBoundaries,
    ErrantRecordReporter,
    ExactlyOnceSupport,
    OffsetStorageReader,
    SinkConnector,
    SinkTask,
    SinkTaskContext,
    SourceConnector,
    SourceConnectorContext,
    SourceTask,
    SourceTaskContext,
    Task,
    TaskContext,
    TransactionContext,
    partition_key,
)
from connect_magics.api.converters import (
    ByteArrayConverter,
    Converter,
    HeaderConverter,
    JsonConverter,
    SchemaAndValue,
    SimpleHeaderConverter,
    StringConverter,
)
from connect_magics.api.data import (
    Date,
    Decimal,
    Field,
    Schema,
    SchemaBuilder,
    SchemaType,
    Struct,
    Time,
    Timestamp,
)
from connect_magics.api.errors import (
    AlreadyExistsException,
    ConnectException,
    DataException,
    NotFoundException,
    RetriableException,
    SchemaBuilderException,
)
from connect_magics.api.predicates import Predicate
from connect_magics.api.records import (
    ConnectRecord,
    Header,
    Headers,
    SinkRecord,
    SinkRecords,
    SourceRecord,
    SourceRecords,
    TopicPartition,
)
from connect_magics.api.transforms import Transformation

__all__ = [
    # connectors and tasks
    "Connector", "ConnectorContext", "ErrantRecordReporter", "OffsetStorageReader", "SinkConnector", "SinkTask", "SinkTaskContext",
    "SourceConnector", "SourceConnectorContext", "SourceTask", "SourceTaskContext", "Task", "TaskContext",
    "partition_key", "ConnectorTransactionBoundaries", "ExactlyOnceSupport", "TransactionContext",
    # records
    "ConnectRecord", "Header", "Headers", "SinkRecord", "SinkRecords", "SourceRecord", "SourceRecords", "TopicPartition",
    # configuration
    "NO_DEFAULT", "AbstractConfig", "CaseInsensitiveValidString", "CompositeValidator", "ConfigDef",
    "ConfigException", "ConfigKey", "ConfigValue", "Importance", "LambdaValidator", "NonEmptyString",
    "NonNullValidator", "Password", "Range", "Recommender", "Type", "ValidList", "ValidString", "Validator",
    "Width", "config_infos",
    # data
    "Date", "Decimal", "Field", "Schema", "SchemaBuilder", "SchemaType", "Struct", "Time", "Timestamp",
    # converters
    "ByteArrayConverter", "Converter", "HeaderConverter", "JsonConverter", "SchemaAndValue",
    "SimpleHeaderConverter", "StringConverter",
    # transformations and predicates (Kafka's own: connect_magics.transforms)
    "Predicate", "Transformation",
    # errors
    "AlreadyExistsException", "ConnectException", "DataException", "NotFoundException", "RetriableException",
    "SchemaBuilderException",
]
