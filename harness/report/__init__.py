"""The report (analysing half): ``render.py`` writes report.html and compare.html from an
analysis, ``charts.py`` builds its figures, ``sections.py`` lists its sections, ``format.py`` is
the one formatter. Markup lives in reports/templates/*.j2. The report computes nothing."""
