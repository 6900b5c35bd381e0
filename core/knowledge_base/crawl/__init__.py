"""The crawler: a documentation website indexed into its collection with no source
application (docs/integrations/crawler.md). The pure parts (urls, sitemap,
page, frontier, decide) import no I/O library; fetcher.py and robots.py do the HTTP,
discover.py fills a new run's frontier, store.py keeps the state, crawler.py is one run,
schedule.py the loop that starts runs, report.py what the endpoints serve."""
