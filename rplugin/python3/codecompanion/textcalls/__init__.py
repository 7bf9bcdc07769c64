"""Tool calls written as text: call blocks in answers, prompt mode, and recovery in native mode.

`blocks` reads a block of text as calls, `stream` finds call blocks in an answer as it
streams, `prompt` describes tools in the system prompt and rewrites history for models that
are sent no `tools`, and `mode` decides per adapter and model which way tools are offered.
"""
