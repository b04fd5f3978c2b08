package redisstore

import (
	"fmt"
	"reflect"

	"github.com/redis/go-redis/v9"
)

// notCarried are fields of go-redis's parsed options that a UniversalOptions
// has no field for and that need none: the network is TCP, and the addresses
// are passed on their own.
var notCarried = map[string]bool{"Network": true, "Addr": true, "Addrs": true, "SentinelAddrs": true}

// universal converts the options go-redis's parser returned (*redis.Options,
// *redis.ClusterOptions or *redis.FailoverOptions) into UniversalOptions,
// field by field: every field of the same name and type is copied, and a
// field set that UniversalOptions cannot carry is an error rather than a
// setting silently dropped.
func universal(parsed any, addrs []string, cluster bool) (*redis.UniversalOptions, error) {
	uo := &redis.UniversalOptions{Addrs: addrs, IsClusterMode: cluster}
	src := reflect.ValueOf(parsed).Elem()
	dst := reflect.ValueOf(uo).Elem()
	for i := range src.NumField() {
		f := src.Type().Field(i)
		v := src.Field(i)
		if !f.IsExported() || notCarried[f.Name] || v.IsZero() {
			continue
		}
		d := dst.FieldByName(f.Name)
		if !d.IsValid() || d.Type() != f.Type {
			return nil, fmt.Errorf("the option behind %s is not supported here", f.Name)
		}
		d.Set(v)
	}
	return uo, nil
}
