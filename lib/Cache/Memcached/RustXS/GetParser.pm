package Cache::Memcached::RustXS::GetParser;

use strict;
use warnings;

use Carp ();

use Cache::Memcached::RustXS ();

our $VERSION = '1.000';

# parse_from_sock, parse_from_string, current_key, error, inline_finalize,
# _new and _get_response_items are XSUBs (perl/RustXS.xs).

# Whether new() finishes plain values itself when on_item is Cache::Memcached's
# own finalize (see "INLINE FINALIZE"); read by new().
our $InlineFinalize = 1 unless defined $InlineFinalize;

# Which closure is Cache::Memcached's own finalize is ClientInternals' to
# say (see "INLINE FINALIZE").
use Cache::Memcached::RustXS::ClientInternals ();

sub new {
    my ($class, $dest, $namespace_len, $on_item) = @_;
    Carp::croak('Usage: ' . __PACKAGE__ . '->new(dest, namespace_len, on_item)') if @_ < 3 || @_ > 4;
    return _new($class, $dest, $namespace_len, $on_item,
                $InlineFinalize && Cache::Memcached::RustXS::ClientInternals::is_load_multi_finalize($on_item) ? 1 : 0);
}

# How much of a bad response get_response_items' message shows.
my $SHOWN_BYTES = 80;

# ---- get responses as the server sent them ------------------------------------------

# The items of a whole get response, as stored: ([[key, flags, data, cas],
# ...], whether END ended it), read by the engine's parser with nothing
# decoded (the XSUB _get_response_items, over perl/src/items.c); croaks
# with the parser's reason and the bytes it refused on a bad response.
# $_[0], not a copy: a response may be large.
sub get_response_items {
    my ($items, $complete, $why, $bad_at, $after_value) = _get_response_items($_[0]);
    return ($items, $complete) unless defined $why;
    (my $where = substr $_[0], $bad_at, $SHOWN_BYTES) =~ s/\r?\n.*//s;
    $where = "the two bytes after the value of $after_value" if defined $after_value;
    Carp::croak("not a memcached get response: $why ('" . Cache::Memcached::RustXS::_printable($where) . "')");
}

# ---- before a fork ----------------------------------------------------------------

# Which closure is Cache::Memcached's own finalize is found out when the
# first parser with an on_item is made, and kept for the process
# (ClientInternals loads B and compiles the known finalize). When
# Cache::Memcached is loaded already, it is found out as this module loads:
# a server that loads both and then forks its workers finds it out once for
# all of them, where each worker would otherwise do it at its first
# get_multi, at a cost in memory far above what it allocates (see
# "PREFORKING SERVERS").
Cache::Memcached::RustXS::ClientInternals::is_load_multi_finalize(sub { })
    if defined &Cache::Memcached::_load_multi;

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::GetParser - a fast, strict parser_class for Cache::Memcached

=head1 SYNOPSIS

    use Cache::Memcached;
    use Cache::Memcached::RustXS::GetParser;

    my $memd = Cache::Memcached->new({
        servers            => ['127.0.0.1:11211'],
        namespace          => 'app:',
        compress_threshold => 10_000,
        parser_class       => 'Cache::Memcached::RustXS::GetParser',
    });

    $memd->set(greeting => 'hello');
    my $value  = $memd->get('greeting');
    my $values = $memd->get_multi(qw(greeting missing));

=head1 DESCRIPTION

Cache::Memcached reads every C<get> and C<get_multi> reply through its
C<parser_class>. This class is a drop-in replacement for the pure-Perl
L<Cache::Memcached::GetParser> and for L<Cache::Memcached::GetParserXS>: a
Rust parser of the memcached text protocol behind a thin XS layer. Changing
the C<parser_class> argument is all it takes.

It parses every shape measured faster than both; end to end, on
memcached, a C<get_multi> is faster and a single C<get> is at parity with
GetParserXS, since its time is mostly the server's and the kernel's (see
L</PERFORMANCE>). It decompresses compressed values itself,
in Rust, and it is strict: a bad response fails at once and cleanly instead
of corrupting values or waiting for C<select_timeout>.

=head1 THE CONTRACT

Cache::Memcached (C<parser_class> exists since 1.21; 1.24 to 1.30 are
tested) uses a parser like this, once per server socket in a C<get_multi>:

=over 4

=item new($dest, $namespace_len, $on_item)

C<$dest> is the hash reference the values go into; C<$namespace_len> bytes
are stripped from the front of each key; C<$on_item> is Cache::Memcached's
finalize callback. Returns a new parser (a blessed hash reference, so
subclasses may keep their own fields in it).

=item parse_from_sock($sock)

Reads what the socket has and parses it. Returns C<1> when the response is
complete (C<END> seen), C<0> when more data is needed, C<-1> when the
connection failed or the response is bad. A non-blocking socket (as
Cache::Memcached uses) is read until it has nothing more; a blocking socket
is read once per call. Reads are read(2) on the socket's descriptor:
C<EAGAIN> gives C<0>, C<EINTR> is retried, end of file or an error gives
C<-1>. Once it has returned C<1> or C<-1> it returns the same again.

=item current_key

The key (without namespace) of the value being read when the parse stopped,
or C<undef> when no value was in progress. Cache::Memcached deletes this key
from the result when a connection dies; as nothing partial is ever stored,
that deletion never removes a good value.

=item parse_from_string($bytes)

Parses bytes given directly instead of read from a socket, with the same
results. Handy for tests and for feeding recorded responses. The parser
works on its own copy of C<$bytes>, so the scalar may be anything, even an
element of the destination hash that the parse overwrites.

=back

These are not part of the contract Cache::Memcached uses; they are ours:

=over 4

=item error

Why the parse failed, as a short English message (C<"server replied
SERVER_ERROR">, C<"bytes after END">, C<"the server closed the connection
before the response ended">, C<"read failed: Connection reset by peer">,
...), or C<undef> while it has not failed. Cache::Memcached does not ask;
its debug output and your own code may.

=item inline_finalize

True when this parser finishes plain values itself because C<$on_item> is
Cache::Memcached's own finalize (see L</INLINE FINALIZE>).

=back

And a class function, for code that holds a whole get response (a file of
them, a reply read from a socket) and wants what the server stores:

=over 4

=item get_response_items($response)

    my ($items, $complete) = Cache::Memcached::RustXS::GetParser::get_response_items(
        "VALUE user:1 2 4\r\n\x1f\x8b..\r\nVALUE user:2 0 5 77\r\nhello\r\nEND\r\n");
    # $items: [ [ 'user:1', 2, "\x1f\x8b..", undef ], [ 'user:2', 0, 'hello', 77 ] ]
    # $complete: 1 (END ended it)

The items of the response as the server stores them, in its order, each
C<[ $key, $flags, $data, $cas ]>: the key whole (there is no namespace to
strip), the flags as stored, the data exactly as stored, compressed or not,
without its C<\r\n>, and the cas unique (C<undef> without a cas field).
Nothing is decoded, dropped or warned about: a value flagged compressed
keeps its flag and its bytes, one that would not decode or would inflate
past
L<$Cache::Memcached::RustXS::MaxDecodedSize|Cache::Memcached::RustXS/$MaxDecodedSize> is there, a zstd frame
naming a dictionary that is not loaded is there; a key that comes twice is
there twice. The second value returned says whether C<END> ended the
response: false when C<$response> is only the start of one (the items
whole so far are returned; read more, and call it again with the whole).

The response is read by the same parser, in the engine, as for
Cache::Memcached, by the same rules (L</Strict parsing, immediate
failure>): what C<parse_from_string> refuses, this refuses, croaking
C<"not a memcached get response: WHY ('WHERE')">, WHY being what
L</error> would say (C<server replied SERVER_ERROR>, C<bytes after END>,
C<data block not followed by \r\n>, ...) and WHERE the bytes the parser
refused, up to the end of their line (at most 80, control bytes as
C<\xHH>): a bad line, what follows C<END>; or, when the two bytes after a
value's data are not C<\r\n>, C<the two bytes after the value of KEY>. C<$response> is bytes: a string with wide characters croaks, one
with the UTF-8 flag is downgraded in place. Under taint mode the items of a
tainted response are tainted. It has no options and no state: each call
reads its argument from the start (a caller reading a response in pieces
calls it with all it has so far).

This is how the distribution's own tools read get responses (C<cmrx-dict>'s
L<Cache::Memcached::RustXS::Dict::NodeReader> and
L<Cache::Memcached::RustXS::Dict::Files>). The values of a response as
Cache::Memcached gets them (decoded, with the misses) are what a parser
object stores in its destination.

=back

Each finished value is stored in C<$dest> under its key, with its trailing
C<"\r\n"> (Cache::Memcached's finalize chops two characters), and
C<$on_item> is called in the batched form C<< $on_item->({ $key => $flags,
... }) >> at the end of every C<parse_from_sock> call that finished values,
including the call that fails. Under taint mode (C<-T>) the values are
tainted, as data read with C<sysread> is.

=head1 INLINE FINALIZE

For small values, Cache::Memcached's finalize callback (a Perl loop that
chops each value's C<"\r\n"> and tests its flags) costs more than parsing
them. When C<$on_item> is that very callback, the parser does its work
itself for values with neither flag (F_COMPRESS, F_STORABLE) set, which is
only to store them without their C<"\r\n">, and hands finalize only the
others (Storable images, and compressed values that did not decode), in the
same batched form as always. The results are exactly those of the pure-Perl
parser with finalize doing all of it (F<t/16-getparser-inline.t> compares
them for every kind of value).

The callback is recognised strictly, by its code rather than by the version
number: it must be the closure made by the C<Cache::Memcached::_load_multi>
loaded in the process (every such closure shares that sub's code, which is
what is compared), and that code must be the finalize of Cache::Memcached
1.24 to 1.30 (compared op by op with a copy compiled in the same perl; see
L<Cache::Memcached::RustXS::ClientInternals>). Any other C<$on_item> --
including the finalize of a Cache::Memcached whose finalize is different
code -- is called for every value, as before: the results are the same,
only the time differs. L</inline_finalize> says which path a parser
takes.

=over 4

=item $Cache::Memcached::RustXS::GetParser::InlineFinalize

1 by default. Set it to 0 to hand every value to C<$on_item>, as
GetParserXS does; read when a parser is created.

=back

=head1 PERL CODE INSIDE A PARSE

A parse can run Perl code before it returns: the C<STORE> of a tied
destination hash, the C<DESTROY> of a value that a store replaces, a signal
handler, and C<$on_item>. All of it may die, and nothing leaks when it
does: a parse that dies in the middle fails (it returns C<-1> from then
on, and L</error> says why). C<$on_item> is called once the parser's state is
whole again, so it may parse more with the same parser (the values go into
a new batch) or drop the last reference to it. The other code runs in the
middle of the parse: if it calls the same parser, that call croaks with a
message saying so, and the outer parse goes on (or stops, if the croak is
not caught).

=head1 DIFFERENCES FROM GetParser AND GetParserXS

=over 4

=item Compressed values are decoded in the parser

A value whose flags have C<F_COMPRESS> (2) set is decoded in Rust: a zstd
frame (told by its magic number) with the loaded dictionary its header names
(see L<Cache::Memcached::RustXS::Zstd>), anything else as gzip (libdeflate;
the same engine as L<Cache::Memcached::RustXS::Zlib>). It reaches
C<$on_item> with bit 2 cleared, so Cache::Memcached's finalize does not
gunzip it again. A value that fails to decode is left exactly as it came,
flag included, so that Cache::Memcached's own C<Compress::Zlib::memGunzip>
decides what happens to it: for gzip the outcome is the pure-Perl parser's,
exactly (a zstd frame does not gunzip: C<undef>, as a client without this
distribution reads it). A zstd value whose dictionary is not loaded is
dropped, so the key is a miss, with a warning (how often:
L<Cache::Memcached::RustXS::Zstd/DIAGNOSTICS>). Decompressed output is capped at
L<$MaxDecodedSize|Cache::Memcached::RustXS/$MaxDecodedSize> bytes (64 MiB by default, read
when the parser is created); a value that would decompress to more is
dropped too (as Cache::Memcached::Fast makes a miss of a value its
decompressor refuses): left compressed, it would be inflated by
Compress::Zlib's C<memGunzip>, which has no cap. The gzip trailer's size
field and the zstd frame's content size are used only as a hint for the
first allocation.

=item Strict parsing, immediate failure

The response must be C<VALUE E<lt>keyE<gt> E<lt>flagsE<gt> E<lt>bytesE<gt>[
E<lt>casE<gt>]\r\n>, the data block, C<\r\n>, ... C<END\r\n>. Flags must fit
32 bits, the length at most 1 GiB (the largest item memcached allows), the
key 1 to 250 bytes of anything memcached stores in a key (control bytes
and DEL included: only NUL, space and line feed are refused); an optional
cas field is accepted (the pure-Perl parser rejects it). The two bytes after each data
block must be C<\r\n> (neither old parser checks). C<SERVER_ERROR>,
C<CLIENT_ERROR>, C<ERROR>, an unknown line or a malformed C<VALUE> line fail
at once, where the old parsers wait for more data until C<select_timeout>
(1 s by default) expires. A line that grows past 2 KiB without C<\r\n> fails
too: nothing is buffered without bound.

=item Nothing partial, nothing raw

When C<parse_from_sock> returns C<-1>, the value in progress is dropped
(never stored half-read) and every value finished before it has already been
through C<$on_item>. GetParserXS finalizes only at C<END>, so a dropped
connection leaves raw values (still ending in C<"\r\n">, still gzipped) in
the result.

=item Memory

Small values are parsed out of one 64 KiB read buffer, which the next
parser reuses. A large value is read straight into its own scalar. The
declared length is a claim, not a fact: the scalar starts at most 1 MiB
(memcached's default item limit) large and doubles as data arrives, so a
reply that promises a gigabyte and sends nothing costs a megabyte at most
(Cache::Memcached::Fast allocates the whole claim and dies with "Out of
memory!"). Finished values are sized exactly, so the copy Cache::Memcached's
C<get> returns shares their buffer: a 20 MB value costs about one copy of
itself (F<t/11-getparser-memcached.t>).

=item Keys

Keys are stored as bytes, as the pure-Perl parser stores them; UTF-8 keys
come back as their UTF-8 bytes.

=item Threads

A parser belongs to the thread that created it. Creating an ithread while a
parser exists is safe; using the copy in the new thread croaks. Parsers
live only for one C<get_multi>, so this does not arise with
Cache::Memcached. Forked children may use their copies.

=back

=head1 PREFORKING SERVERS

A server that loads the application and then forks its workers (Starman
with C<--preload-app>, Apache's prefork with mod_perl, ...) should load
Cache::Memcached before this module, as the L</SYNOPSIS> does, so that
L</INLINE FINALIZE> is set up once in the parent and shared by the
workers: L<Cache::Memcached::RustXS::Operations/PREFORKING SERVERS> says
why and what it costs otherwise.

=head1 PERFORMANCE

Measured with F<bench/run.pl> (medians of 15 interleaved rounds, ratios
against the other parsers in the same run; F<bench/README.md> has the whole table):

                                  GetParserXS  GetParser    ours   vs XS
  parse-only (socketpair, with Cache::Memcached's finalize as on_item)
    1 x 100 B                       4.26 us     4.56 us  1.64 us   2.59x
    100 x 100 B                     44.2 us      208 us  10.2 us   4.35x
    100 x 1 KB                      54.6 us      364 us  19.4 us   2.82x
    10 x 100 KB                      118 us      191 us  88.4 us   1.33x
    1 x 1 MB                         102 us      109 us  77.3 us   1.31x
    100 gzip'd 9 KB JSON values     1.79 ms     2.25 ms   514 us   3.48x
  end to end (Cache::Memcached get/get_multi, memcached on loopback)
    get 1 x 100 B                    101 us      102 us  98.2 us   1.03x
    get_multi 100 x 100 B            216 us      380 us   183 us   1.18x
    get 1 x 1 MB                     507 us      536 us   507 us   1.00x
    get_multi 100 gzip'd JSON       2.15 ms     2.70 ms   786 us   2.73x

A single C<get> is at parity within the noise: on machines loaded by other
work it measured 0.87 to 0.93 times GetParserXS's speed in some runs and
met the bar in others (F<bench/README.md>). Compressed values gain because the gunzip moves from Perl and zlib into
Rust and libdeflate; small plain values because of L</INLINE FINALIZE>
(without it, with a no-op on_item, the parser alone is 1.26 times
GetParserXS on 100 x 100 B).

=head1 SEE ALSO

L<Cache::Memcached>, whose C<parser_class> this is;
L<Cache::Memcached::GetParser> (pure Perl) and
L<Cache::Memcached::GetParserXS>, the parsers it replaces;
L<Cache::Memcached::RustXS::Zlib>, L<Cache::Memcached::RustXS>.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
