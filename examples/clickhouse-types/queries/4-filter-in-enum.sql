SELECT count() FROM logs_enum WHERE service IN ('api', 'auth', 'search')
