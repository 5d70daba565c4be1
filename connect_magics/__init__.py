"""connect_magics: a Kafka Connect runtime inside a Jupyter kernel."""
