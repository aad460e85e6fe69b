"""A person at a seat: the seat a person plays from a terminal (terminal) and what the
person sees and types, as pure functions of the seat's protocol messages (view). It may
import the subpackages before it in README "Layout" (up to replay), protocol and the
standard library."""
