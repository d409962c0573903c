"""What a run stores and every upper layer reads: run and result records (``run``), the one
``Accuracy`` (``accuracy``), pass@k / Wilson / bootstrap (``rates``), where an imported run came
from (``provenance``), and the hashes records carry (``hashes``). Imports nothing above
``project/``."""
