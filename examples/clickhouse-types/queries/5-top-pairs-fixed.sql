SELECT service, path, count() AS n FROM logs_fixed WHERE level != 'debug' GROUP BY service, path ORDER BY n DESC, service, path LIMIT 10
