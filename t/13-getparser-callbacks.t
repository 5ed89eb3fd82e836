#!/usr/bin/perl
# What on_item and the destination hash may do to the parser that calls
# them: feed it again, drop the last reference to it, die, be tied.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use Cache::Memcached::RustXS::GetParser;
use CMRXTest::LeakCheck qw(no_leaks);

my $CLASS = 'Cache::Memcached::RustXS::GetParser';

{   # on_item parses more with the same parser (re-entrant)
    my (%dest, $p, $depth, @batches);
    $p = $CLASS->new(\%dest, 0, sub {
        push @batches, join ',', sort keys %{ $_[0] };
        $p->parse_from_string("VALUE b 0 1\r\nB\r\n") if !$depth++;
    });
    is $p->parse_from_string("VALUE a 0 1\r\nA\r\n"), 0, 're-entrant on_item: the outer call returns 0';
    is_deeply [ sort keys %dest ], [qw(a b)], '... both values stored';
    is_deeply \@batches, [ 'a', 'b' ], '... each value handed to on_item once';
    is $p->parse_from_string("END\r\n"), 1, '... and the parser goes on';
}

{   # on_item drops the last reference to the parser
    my (%dest, $p, $seen);
    $p = $CLASS->new(\%dest, 0, sub { $seen++; undef $p });
    is $p->parse_from_string("VALUE a 0 1\r\nA\r\n"), 0, 'on_item frees the parser: the call finishes';
    ok $seen && !defined $p, '... on_item ran and the parser is gone';
    is $dest{a}, "A\r\n", '... the value is stored';
}

{   # on_item dies: its values are not handed over again
    my (%dest, @batches);
    my $p = $CLASS->new(\%dest, 0, sub {
        my ($batch) = @_;
        push @batches, join ',', sort keys %$batch;
        for my $k (keys %$batch) { chop $dest{$k}; chop $dest{$k} }    # as finalize does
        die "boom\n" if @batches == 1;
    });
    ok !eval { $p->parse_from_string("VALUE a 0 5\r\nhello\r\n"); 1 }, 'on_item dies: the call dies';
    is $@, "boom\n", '... with on_item\'s error';
    is $p->parse_from_string("VALUE b 0 5\r\nworld\r\nEND\r\n"), 1, '... the parser goes on';
    is_deeply \@batches, [ 'a', 'b' ], '... a is not handed over twice';
    is_deeply \%dest, { a => 'hello', b => 'world' }, '... so nothing is chopped twice';
}

{   # a tied destination hash copies the value: nothing leaks
    require Tie::Hash;
    my $resp = join('', map { "VALUE k$_ 0 5\r\nhello\r\n" } 1 .. 10) . "END\r\n";
    my %copy;
    my $parse = sub {
        tie my %tied, 'Tie::StdHash';
        my $parser = $CLASS->new(\%tied, 0, sub { });
        $parser->parse_from_string($resp);
        %copy = %tied;
    };
    no_leaks('tied destination: no SV leaks', $parse);
    %copy = ();
    $parse->();
    is scalar(keys %copy), 10, '... and the tied hash got every value';
}

done_testing;
