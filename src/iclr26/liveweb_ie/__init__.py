"""LiveWeb-IE (ICLR 2026): web information extraction judged on live sites, and the Visual Grounding
Scraper (VGS). We cannot reach the web, so the sites are generated here, served on 127.0.0.1, and
change with a version clock (content and layout drift).

- `sites`: five generated sites with page groups, content drift and layouts v1-v3;
- `server`: their HTTP server on 127.0.0.1 and a bounded load test;
- `release`: LiveWeb-IE's data layout (records, group files, SWDE-style ground truth), written for
  our sites and read from the real release by path;
- `metric`: P/R/F1 over value sets with the stated normalisation;
- `wrapper`: XPath wrappers applied with lxml;
- `render`: headless-Chromium regions and set-of-mark boxes;
- `replies`: parsers for the models' replies; `prompting`: page text and one model call;
- `vgs`: the four-stage VGS; `baselines`: CoT, Reflexion, AutoScraper-style, rule-based, oracle;
- `evaluate`: the protocol (wrapper on the first page, applied to the rest, before and after drift).
"""

from iclr26.core.system import system_attributes

__getattr__ = system_attributes(__name__)
