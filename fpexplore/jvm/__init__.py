"""The JVM side of the DJL backend: pinned Maven artifacts and the JPype worker process."""
