package netnsfs

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// BenchmarkCreateRemove100 creates and removes 100 named namespaces with 8
// workers, as a planner applying a 100-host lab would.
func BenchmarkCreateRemove100(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root (CAP_SYS_ADMIN) to create namespaces")
	}
	for i := 0; b.Loop(); i++ {
		names := make([]string, 100)
		for j := range names {
			names[j] = fmt.Sprintf("tsltest.bench%d.%d.%d", os.Getpid(), i, j)
		}
		parallel(b, names, func(n string) error { _, err := Create(n); return err })
		parallel(b, names, Remove)
	}
}

func parallel(b *testing.B, names []string, fn func(string) error) {
	var wg sync.WaitGroup
	ch := make(chan string)
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for n := range ch {
				if err := fn(n); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for _, n := range names {
		ch <- n
	}
	close(ch)
	wg.Wait()
}
