// Command trumpgen makes the strong computer player's trump table (core/robot/trumps.txt): for
// every first packet forehand can hold and every suit it can name, the share of deals the trump
// team wins and draws, each deal solved with all hands open (package dd) with forehand leading.
// The deals are the packet's other 21 cards dealt at random from a seeded PCG. Choices that are
// the same game up to renaming cards are solved once (robot.TrumpKey): 1,813 lines.
//
//	go run ./core/robot/trumpgen -worlds 128 -seed 1 > core/robot/trumps.txt
//
// It writes its command line on the file's first line; -workers spreads the lines over goroutines.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/kontermatt/kontermatt/core"
	"github.com/kontermatt/kontermatt/core/robot"
	"github.com/kontermatt/kontermatt/core/robot/dd"
)

func main() {
	worlds := flag.Int("worlds", 128, "deals solved per line")
	seed := flag.Uint64("seed", 1, "seed of the deals")
	workers := flag.Int("workers", 1, "lines solved at once")
	flag.Parse()
	keys := robot.TrumpKeys()
	lines := make([]string, len(keys))
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(*workers, 1) {
		wg.Go(func() {
			sv := dd.NewSolver()
			for i := range next {
				lines[i] = Line(sv, keys[i], *seed, uint64(i), *worlds)
			}
		})
	}
	for i := range keys {
		next <- i
		if i%200 == 0 {
			fmt.Fprintf(os.Stderr, "trumpgen: line %d of %d\n", i, len(keys))
		}
	}
	close(next)
	wg.Wait()
	fmt.Printf("# kontermatt trump table: go run ./core/robot/trumpgen -worlds %d -seed %d\n", *worlds, *seed)
	fmt.Printf("# first packet (hex card set), trump (S stands for S, H and D; see robot.TrumpKey), trump team wins and draws per 1000 deals\n")
	for _, l := range lines {
		fmt.Println(l)
	}
}

// Line solves one line's deals and formats it.
func Line(sv *dd.Solver, k robot.TrumpLine, seed, stream uint64, worlds int) string {
	r := rand.New(rand.NewPCG(seed, stream))
	const forehand = core.Seat(1)
	team := forehand.Team()
	rest := (core.FullDeck &^ k.Packet).Cards()
	win, draw := 0, 0
	for range worlds {
		r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		var hands [4]core.CardSet
		hands[forehand] = k.Packet | core.SetOf(rest[:3]...)
		at := 3
		for s := core.Seat(0); s < 4; s++ {
			if s != forehand {
				hands[s] = core.SetOf(rest[at : at+6]...)
				at += 6
			}
		}
		sv.Reset(dd.Position{Trump: k.Trump, Hands: hands, Leader: forehand}, team)
		switch v := sv.Search(19, 21); {
		case v >= 21:
			win++
		case v == 20:
			draw++
		}
	}
	return fmt.Sprintf("%06x %s %d %d", uint32(k.Packet), k.Trump, (win*1000+worlds/2)/worlds, (draw*1000+worlds/2)/worlds)
}
