"""Policy: what is reported and how severe, once the rules have found it.

``config`` reads ``.gpustack.yaml``; ``selection`` enables rules and sets severities;
``suppress`` applies annotations, comments and ``exemption``s; ``baseline`` hides findings
recorded before. Each module makes one decision and states its precedence.
"""
