"""Procedures, one module per family. Each public function is bound as a Session method and
runs as one STIMER-timed step (`procedure` decorator)."""
