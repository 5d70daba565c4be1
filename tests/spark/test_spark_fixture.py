"""The local SparkSession fixture works and reads what the broker holds (through pandas)."""

import pandas as pd


def test_spark_session_runs_a_job(spark) -> None:
    df = spark.createDataFrame(pd.DataFrame({"n": range(10)}))
    assert df.selectExpr("sum(n) AS s").collect()[0]["s"] == 45
