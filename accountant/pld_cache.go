package accountant

import (
	"container/list"
	"sync"
)

// stepCache keeps the most recently used single-step PLDs of the process,
// by mechanism and grid. A calibration's searches and a run's budget stop
// build a fresh accountant for every query, and connect-the-dots, the
// step's discretisation, was most of each one's time; the PMFs are
// functions of the key alone and never written after they are built, so
// a cached one gives the same ε bit for bit.
type stepCache struct {
	mu     sync.Mutex
	max    int // points held at most (both directions of every entry)
	points int
	order  *list.List // of *cachedStep, most recent first
	byKey  map[pldKey]*list.Element
}

type cachedStep struct {
	key pldKey
	p   [2]*pmf // remove, add
}

// pldStepCache is the process's cache: 2²³ points, 64 MiB of float64.
var pldStepCache = &stepCache{max: 1 << 23}

// get returns the key's PLD in both directions (remove, add), built by
// connect-the-dots when it is not held.
func (c *stepCache) get(k pldKey) ([2]*pmf, error) {
	c.mu.Lock()
	if e, ok := c.byKey[k]; ok {
		c.order.MoveToFront(e)
		p := e.Value.(*cachedStep).p
		c.mu.Unlock()
		return p, nil
	}
	c.mu.Unlock()
	// Built outside the lock: two goroutines asking for one key both
	// build it, and the result is the same.
	var p [2]*pmf
	for i, remove := range []bool{true, false} {
		g, err := k.m.curve(remove)
		if err != nil {
			return p, err
		}
		d, err := connectTheDots(g, k.h)
		if err != nil {
			return p, err
		}
		p[i] = d
	}
	c.put(k, p)
	return p, nil
}

func (c *stepCache) put(k pldKey, p [2]*pmf) {
	n := len(p[0].p) + len(p[1].p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey, c.order = map[pldKey]*list.Element{}, list.New()
	}
	if _, ok := c.byKey[k]; ok || n > c.max {
		return
	}
	for c.points+n > c.max {
		e := c.order.Back()
		old := e.Value.(*cachedStep)
		c.points -= len(old.p[0].p) + len(old.p[1].p)
		delete(c.byKey, old.key)
		c.order.Remove(e)
	}
	c.byKey[k] = c.order.PushFront(&cachedStep{key: k, p: p})
	c.points += n
}
