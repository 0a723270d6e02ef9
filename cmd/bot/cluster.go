package main

import (
	"fmt"
	"os"

	"github.com/kontermatt/kontermatt/storage/etcdstore"
)

// copyLeases are this copy's leases in the cluster when the store is etcd (several copies of
// the bot, docs/cluster.md), named by the host and the process; nil for bbolt, the only copy.
func copyLeases(st botStore) *etcdstore.Leases {
	etcd, ok := st.(*etcdstore.Store)
	if !ok {
		return nil
	}
	host, _ := os.Hostname()
	return etcd.Leases(fmt.Sprintf("%s/%d", host, os.Getpid()), 0)
}
