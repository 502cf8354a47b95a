//go:build !cgo

package iceoryx2

import "context"

// Node is unavailable without cgo.
type Node struct{}

// Subscriber is unavailable without cgo.
type Subscriber struct{}

// Publisher is unavailable without cgo.
type Publisher struct{}

// NewNode returns ErrUnavailable: built without cgo.
func NewNode(string) (*Node, error) { return nil, ErrUnavailable }

func (*Node) Close() error                               { return ErrUnavailable }
func (*Node) CleanupDeadNodes() (int, int, error)        { return 0, 0, ErrUnavailable }
func (*Node) ListServices() ([]ServiceInfo, error)       { return nil, ErrUnavailable }
func (*Node) ServiceDetails(string) (ServiceInfo, error) { return ServiceInfo{}, ErrUnavailable }
func (*Node) Subscribe(string, SubscriberOptions) (*Subscriber, error) {
	return nil, ErrUnavailable
}
func (*Node) Publisher(string, TypeDetails, PublisherOptions) (*Publisher, error) {
	return nil, ErrUnavailable
}
func (*Subscriber) Receive(context.Context, []Sample) ([]Sample, error) { return nil, ErrUnavailable }
func (*Subscriber) Types() TypeDetails                                  { return TypeDetails{} }
func (*Subscriber) Info() ServiceInfo                                   { return ServiceInfo{} }
func (*Subscriber) BufferSize() int                                     { return 0 }
func (*Subscriber) Dropped() uint64                                     { return 0 }
func (*Subscriber) Received() uint64                                    { return 0 }
func (*Subscriber) Release(*Sample)                                     {}
func (*Subscriber) SetHold(bool)                                        {}
func (*Subscriber) Holding() bool                                       { return false }
func (*Subscriber) DrainLen([]byte) (uint64, uint32)                    { return 0, 0 }
func (*Subscriber) Close() error                                        { return ErrUnavailable }
func (*Publisher) Send([]byte, []byte) (int, error)                     { return 0, ErrUnavailable }
func (*Publisher) ID() []byte                                           { return nil }
func (*Publisher) Close() error                                         { return ErrUnavailable }
func (*Publisher) Subscribers() (int, error)                            { return 0, ErrUnavailable }
