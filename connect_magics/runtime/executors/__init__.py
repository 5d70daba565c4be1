"""Where tasks run. The herder hands an executor a task's spec and the runner built from it, and gets back
a handle to control the task with (:mod:`~connect_magics.runtime.executors.base`).

- ``threads`` (:mod:`~connect_magics.runtime.executors.threads`): the runner on a thread of this process.
- ``processes`` (:mod:`~connect_magics.runtime.executors.processes`): each task in a process of its own.
- ``spark`` (:mod:`connect_magics.spark.executor`): each task a Spark job on the session's executors.

The last two host the task elsewhere (:mod:`~connect_magics.runtime.executors.hosted`), where
:mod:`~connect_magics.runtime.executors.task_host` builds the runner again from its spec.
"""

#: The executors a runtime builds by name.
EXECUTORS = ("threads", "processes", "spark")
