#!/usr/bin/perl
# No module of lib/ loads, through its use and require lines, a module that
# loads it back: a cycle makes the order of loading decide what is defined
# (an import from a module still being compiled finds nothing), and a
# run-time require only hides it. Each module is also loaded alone.
use strict;
use warnings;

use File::Find ();
use Test::More;

# The distribution's modules each module loads: package => { package => 1 }.
sub dependencies {
    my ($dir) = @_;
    my %dep;
    File::Find::find({ no_chdir => 1, wanted => sub {
        return unless /\.pm\z/;
        open my $fh, '<', $_ or die "$_: $!";
        my $package;
        while (my $line = <$fh>) {
            last if $line =~ /^__END__/;
            $package //= $1 if $line =~ /^package ([\w:]+);/;
            next unless $package && $line =~ /^\s*(?:use|require)\s+(Cache::Memcached::RustXS[\w:]*)/;
            $dep{$package}{$1} = 1 unless $1 eq $package;
        }
        $dep{$package} ||= {} if $package;
    } }, $dir);
    return \%dep;
}

# Every cycle found by a depth-first walk, each as a list of packages.
sub cycles {
    my ($dep) = @_;
    my (%state, @stack, @cycles);
    my $visit;
    $visit = sub {
        my ($node) = @_;
        $state{$node} = 'open';
        push @stack, $node;
        for my $next (sort keys %{ $dep->{$node} || {} }) {
            if (($state{$next} // '') eq 'open') {
                my @cycle = @stack;
                shift @cycle while $cycle[0] ne $next;
                push @cycles, [ @cycle, $next ];
            }
            elsif (!$state{$next}) {
                $visit->($next);
            }
        }
        pop @stack;
        $state{$node} = 'done';
    };
    $visit->($_) for sort keys %$dep;
    return @cycles;
}

# The check itself fails on a planted cycle.
my @planted = cycles({ A => { B => 1 }, B => { C => 1 }, C => { A => 1 }, D => {} });
is_deeply \@planted, [ [qw(A B C A)] ], 'a planted cycle A -> B -> C -> A is found';

my $dep = dependencies('lib');
ok keys %$dep > 20, 'the modules of lib/ are read (' . keys(%$dep) . ')';
is join("\n", map { join ' -> ', @$_ } cycles($dep)), '', 'no module loads one that loads it back';

for my $module (sort keys %$dep) {
    my $out = `$^X -Mblib -e 'use $module; print "loaded"' 2>&1`;
    is $out, 'loaded', "$module loads alone";
}

done_testing;
