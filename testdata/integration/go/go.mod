module example.com/sframedemo

go 1.26
