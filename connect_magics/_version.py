"""The package's version, in one place: pyproject.toml reads it, and every built-in plugin reports it.

Kept out of ``connect_magics/__init__`` so that reading it imports nothing else, and looked up here rather
than in the installed distribution's metadata: that search walks every ``sys.path`` entry, and a
SparkSession with ``spark.jars.packages`` puts its jars there (over a second to scan).
"""

__version__ = "0.1.0"
