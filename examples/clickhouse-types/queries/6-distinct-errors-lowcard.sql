SELECT uniqExact(service, path) FROM logs_lowcard WHERE status >= 400
