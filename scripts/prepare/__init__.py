"""The data pipeline behind every language pack: one language-agnostic pipeline (pipeline.py)
driven by data/languages.json, reading only what scripts/fetch-data.sh extracted. Run it through
scripts/prepare_data.py. Standard library only; output is byte-identical on every run.
"""
