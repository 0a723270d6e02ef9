//go:build race

package etcdstore_test

// pressRounds is how many turns of double presses TestDoublePressesOnEtcd makes at each of its
// 100 tables. The race detector makes the service and etcd about twenty times slower, so under
// it the test makes 2,000 double presses, in about the time 10,000 take without it: .ci/run runs
// the test without the detector too, for the 10,000.
const pressRounds = 20
