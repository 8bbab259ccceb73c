SELECT uniqExact(service, path) FROM logs_string WHERE status >= 400
