//go:build !race

package etcdstore_test

// pressRounds is how many turns of double presses TestDoublePressesOnEtcd makes at each of its
// 100 tables: 10,000 double presses (see race_test.go for the run under the race detector).
const pressRounds = 100
