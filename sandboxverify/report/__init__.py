"""The verdict: report v1 and the renderings that need nothing but a report (JUnit XML, the
Markdown step summary), and the one-line diagnosis of a failed tool's output.

The bottom of the host side: imports nothing else of sandboxverify.
"""
