#!/usr/bin/perl
# Inline finalize: when on_item is Cache::Memcached's own finalize, the
# parser finishes values with neither flag itself and hands the rest to
# finalize. For every kind of value a server can hold, get and get_multi
# must give exactly what they give with the inline path turned off
# ($InlineFinalize = 0) and with the pure-Perl parser.
use strict;
use warnings;

use lib 't/lib';
use Compress::Zlib ();
use Storable ();
use Test::More;

use Cache::Memcached;
use Cache::Memcached::GetParser;
use Cache::Memcached::RustXS::GetParser;
use CMRXTest::Memcached;
use CMRXTest::Raw qw(raw_set);

my $RUST = 'Cache::Memcached::RustXS::GetParser';
my $NS   = 'inl:';

my $server = CMRXTest::Memcached->start_or_skip(args => ['-I', '2m']);
my $addr = $server->address;

my $text = join ' ', map { "value text $_" } 1 .. 300;
my %KINDS = (
    plain            => [ 0, 'hello world' ],
    empty            => [ 0, '' ],
    binary           => [ 0, "a\0b\r\nEND\r\nVALUE x 0 1\r\n\xff\x00" ],
    large            => [ 0, 'L' x 300_000 ],
    other_flag_bits  => [ 4 | 256, 'flags with bits finalize ignores' ],
    compressed       => [ 2, Compress::Zlib::memGzip($text) ],
    storable         => [ 1, Storable::nfreeze({ list => [ 1, 2, "\r\nEND\r\n" ] }) ],
    compressed_storable => [ 3, Compress::Zlib::memGzip(Storable::nfreeze([ 'deep', { a => 1 } ])) ],
    corrupt_gzip     => [ 2, "\x1f\x8b\x08\x00not really gzip at all" ],
    corrupt_storable => [ 1, 'this is not a Storable image' ],
    corrupt_both     => [ 3, "\x1f\x8b\x08\x00broken" ],
    gzip_of_garbage_storable => [ 3, Compress::Zlib::memGzip('not storable either') ],
);
for my $kind (sort keys %KINDS) {
    my ($flags, $data) = @{ $KINDS{$kind} };
    ok raw_set($addr, "$NS$kind", $flags, $data), "stored $kind with flags $flags";
}
my @keys = (sort(keys %KINDS), 'missing');

# A parser_class that remembers whether new() took the inline path.
{
    package InlineSpy;
    our @ISA = ('Cache::Memcached::RustXS::GetParser');
    our @inline;
    sub new {
        my $p = shift->SUPER::new(@_);
        push @inline, $p->inline_finalize;
        return $p;
    }
}

sub fetch_all {
    my ($class) = @_;
    my $memd = Cache::Memcached->new({
        servers => [$addr], namespace => $NS, parser_class => $class,
    });
    my %one = map { ($_ => [ $memd->get($_) ]) } @keys;
    return { multi => $memd->get_multi(@keys), one => \%one };
}

local $Storable::canonical = 1;
my $pure = fetch_all('Cache::Memcached::GetParser');
ok exists $pure->{multi}{corrupt_gzip}, 'the pure-Perl parser: a corrupt gzip value is a key with undef';
ok !exists $pure->{multi}{corrupt_storable}, '... a corrupt Storable value is no key';

{
    local @InlineSpy::inline;
    my $inline = fetch_all('InlineSpy');
    ok @InlineSpy::inline && !grep({ !$_ } @InlineSpy::inline),
        'Cache::Memcached 1.30\'s finalize is recognised: the inline path is taken';
    is_deeply $inline, $pure, 'inline finalize: get and get_multi give what the pure-Perl parser gives';
    for my $kind (sort keys %KINDS) {
        is_deeply $inline->{multi}{$kind}, $pure->{multi}{$kind}, "... $kind";
    }
}
{
    local @InlineSpy::inline;
    local $Cache::Memcached::RustXS::GetParser::InlineFinalize = 0;
    my $off = fetch_all('InlineSpy');
    ok @InlineSpy::inline && !grep({ $_ } @InlineSpy::inline),
        '$InlineFinalize = 0: the inline path is not taken';
    is_deeply $off, $pure, '... and get and get_multi give the same';
}
{
    local @InlineSpy::inline;
    local $Cache::Memcached::VERSION = '1.29';
    my $old = fetch_all('InlineSpy');
    ok @InlineSpy::inline && !grep({ $_ } @InlineSpy::inline),
        'a Cache::Memcached version not known: not taken';
    is_deeply $old, $pure, '... and the same results';
}
{   # Any other on_item, even a copy of finalize's code, is called as before.
    my %dest;
    my @batches;
    my $p = $RUST->new(\%dest, 0, sub { push @batches, { %{ $_[0] } } });
    is $p->inline_finalize, 0, 'an on_item of our own: not inline';
    $p->parse_from_string("VALUE k 0 1\r\nv\r\nEND\r\n");
    is_deeply \@batches, [ { k => 0 } ], '... it gets every value';
    is $dest{k}, "v\r\n", '... and the value keeps its CRLF for it';
}

done_testing;
