package rueidisstore_test

import (
	"crypto/x509"
	"log"
	"os"
	"strings"

	"github.com/redis/rueidis"

	rueidisstore "github.com/ratewarden/ratewarden/store/rueidis"
)

// A managed Redis: the URL (rediss://app@redis.example.com:6380/0, the user
// but no password) from the environment, read by rueidis.ParseURL; the
// password from a mounted secret file; the provider's CA trusted. (It needs
// such a Redis, so it is compiled but not run by go test.)
func Example_managedRedis() {
	opt, err := rueidis.ParseURL(os.Getenv("REDIS_URL"))
	if err != nil {
		log.Fatal("REDIS_URL is not a Redis URL") // rueidis's error may quote the URL
	}
	password, err := os.ReadFile("/run/secrets/redis-password")
	if err != nil {
		log.Fatal(err)
	}
	opt.Password = strings.TrimRight(string(password), "\r\n")
	ca, err := os.ReadFile("/etc/ssl/redis-ca.pem")
	if err != nil {
		log.Fatal(err)
	}
	if opt.TLSConfig != nil {
		opt.TLSConfig.RootCAs = x509.NewCertPool()
		opt.TLSConfig.RootCAs.AppendCertsFromPEM(ca)
	}
	client, err := rueidis.NewClient(opt)
	if err != nil {
		log.Fatal(err) // WRONGPASS, NOAUTH or a certificate error: never the password
	}
	defer client.Close()
	store, err := rueidisstore.New(client)
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}
