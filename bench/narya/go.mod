module naryabench

go 1.26.8

require github.com/Overclock-Validator/narya-ed25519 v0.0.0-20260730051143-c265ee966713

require golang.org/x/sys v0.39.0 // indirect
