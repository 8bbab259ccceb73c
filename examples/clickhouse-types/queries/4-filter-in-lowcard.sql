SELECT count() FROM logs_lowcard WHERE service IN ('api', 'auth', 'search')
