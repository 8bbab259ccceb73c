SELECT count() FROM logs_string WHERE service IN ('api', 'auth', 'search')
