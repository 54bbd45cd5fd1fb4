package once

import "sync"

// Map calls a function at most once per key and keeps its answer, an
// error too, for the Map's life. The zero Map is ready; a Map must not
// be copied after first use. Safe for concurrent use.
type Map[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K]*entry[V] // guarded by mu
}

type entry[V any] struct {
	once sync.Once
	v    V
	err  error
}

// Do returns what f returned for the first Do of key, calling f then
// only; the Dos of key made while f runs wait for it. Different keys run
// their functions in parallel.
func (m *Map[K, V]) Do(key K, f func() (V, error)) (V, error) {
	m.mu.Lock()
	e := m.entries[key]
	if e == nil {
		if m.entries == nil {
			m.entries = map[K]*entry[V]{}
		}
		e = &entry[V]{}
		m.entries[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.v, e.err = f() })
	return e.v, e.err
}
