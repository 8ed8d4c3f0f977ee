"""The demo: a private mosquitto, sample transcripts and log lines (written for this project)."""
