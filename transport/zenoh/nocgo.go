//go:build !cgo

package zenoh

import (
	"context"
	"time"
)

// Session is unavailable without cgo.
type Session struct{}

// Subscriber is unavailable without cgo.
type Subscriber struct{}

// Publisher is unavailable without cgo.
type Publisher struct{}

// Queryable is unavailable without cgo.
type Queryable struct{}

// Token is unavailable without cgo.
type Token struct{}

// Open returns ErrUnavailable: built without cgo.
func Open(Config) (*Session, error) { return nil, ErrUnavailable }

func (*Session) Close() error                       { return ErrUnavailable }
func (*Session) ZID() string                        { return "" }
func (*Session) ConfigValue(string) (string, error) { return "", ErrUnavailable }
func (*Session) Connected() (Connections, error) {
	return Connections{}, ErrUnavailable
}
func (*Session) Subscribe(string, SubscriberOptions) (*Subscriber, error) {
	return nil, ErrUnavailable
}
func (*Session) Publisher(string, PublisherOptions) (*Publisher, error) { return nil, ErrUnavailable }
func (*Session) DeclareQueryable(string, func(Query) []Reply) (*Queryable, error) {
	return nil, ErrUnavailable
}
func (*Session) DeclareDeferredQueryable(string, func(Query, *Pending)) (*Queryable, error) {
	return nil, ErrUnavailable
}

// Pending is unavailable without cgo.
type Pending struct{}

func (*Pending) Reply(...Reply) {}
func (*Session) Get(context.Context, string, []byte, time.Duration) ([]GetReply, error) {
	return nil, ErrUnavailable
}
func (*Session) DeclareToken(string) (*Token, error) { return nil, ErrUnavailable }
func (*Session) LiveTokens(string, time.Duration) ([]string, error) {
	return nil, ErrUnavailable
}
func (*Session) LivePublishers(context.Context, string, time.Duration) ([]string, error) {
	return nil, ErrUnavailable
}

func (*Subscriber) Receive(context.Context, []Sample) ([]Sample, error) { return nil, ErrUnavailable }
func (*Subscriber) Dropped() uint64                                     { return 0 }
func (*Subscriber) Received() uint64                                    { return 0 }
func (*Subscriber) Close() error                                        { return ErrUnavailable }
func (*Publisher) Put([]byte, []byte) error                             { return ErrUnavailable }
func (*Publisher) PutAs([]byte, []byte, []byte, uint64) error           { return ErrUnavailable }
func (*Publisher) Close() error                                         { return ErrUnavailable }
func (*Publisher) Matching() (bool, error)                              { return false, ErrUnavailable }
func (*Publisher) Key() string                                          { return "" }
func (*Queryable) Close() error                                         { return ErrUnavailable }
func (*Token) Close() error                                             { return ErrUnavailable }
