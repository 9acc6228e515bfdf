"""Experiments beyond the papers: today's TCPs (Linux's Reno, CUBIC and BBR) through the papers'
mechanisms (`tcp.py`, `today-tcp`), each a question the papers could not ask."""
