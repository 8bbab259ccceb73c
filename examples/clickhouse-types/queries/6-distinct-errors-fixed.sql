SELECT uniqExact(service, path) FROM logs_fixed WHERE status >= 400
