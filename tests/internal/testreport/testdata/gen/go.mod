module example.com/trx

go 1.22
