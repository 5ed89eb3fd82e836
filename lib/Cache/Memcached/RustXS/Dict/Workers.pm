package Cache::Memcached::RustXS::Dict::Workers;

use strict;
use warnings;

use Exporter 5.57 'import';
use IO::Select ();
use POSIX ();
use B ();
use Storable ();

use Cache::Memcached::RustXS::Dict qw(fail);

our $VERSION = '1.000';

our @EXPORT_OK = qw(cores);

my $READ_SIZE = 262144;

# The processors this machine has online (1 when it cannot be told).
sub cores {
    if (open my $fh, '<', '/proc/cpuinfo') {
        my $n = grep { /\Aprocessor\s*:/ } <$fh>;
        return $n if $n;
    }
    my $n = eval { POSIX::sysconf(POSIX::_SC_NPROCESSORS_ONLN()) };
    return $n && $n > 0 ? $n : 1;
}

sub new {
    my ($class, %opt) = @_;
    return bless { jobs => $opt{jobs} || cores(), running => {}, owner => $$ }, $class;
}

sub jobs    { $_[0]{jobs} }
sub running { scalar keys %{ $_[0]{running} } }

# Runs $work in a child of its own (which sees the caller's data as it
# is, and whose memory -- the values it measured, the dictionaries it
# loaded -- is given back when it ends); once its result is back, calls
# $done->($result) here. At most `jobs` children run at once: a call waits
# for one to finish first. A child's error dies here, as it was.
sub run {
    my ($self, $work, $done) = @_;
    $self->_finish_one while $self->running >= $self->{jobs};
    pipe my $reader, my $writer or fail("cannot make a pipe: $!");
    my $pid = fork;
    fail("cannot start a process: $!") unless defined $pid;
    if (!$pid) {
        close $reader;
        %{ $self->{running} } = ();
        my $result = eval { +{ ok => _plain_numbers($work->()) } } || { error => $@ };
        binmode $writer;
        # _exit: no END block, no destructor, no buffered output of the
        # parent's written twice.
        POSIX::_exit(eval { print {$writer} Storable::freeze($result) and close $writer } ? 0 : 1);
    }
    close $writer;
    binmode $reader;
    $self->{running}{$pid} = { reader => $reader, done => $done, bytes => '' };
    return;
}

# Waits for every child, calling each one's $done.
sub wait_all {
    my ($self) = @_;
    $self->_finish_one while $self->running;
    return;
}

# Reads the children's results as they come (a result larger than a pipe
# holds is read while its child writes it) until one is whole.
sub _finish_one {
    my ($self) = @_;
    my $running = $self->{running};
    my %by_fileno = map { (fileno($running->{$_}{reader}) => $_) } keys %$running;
    my $select = IO::Select->new(map { $running->{$_}{reader} } keys %$running);
    for (;;) {
        for my $fh ($select->can_read) {
            my $pid = $by_fileno{ fileno $fh };
            my $job = $running->{$pid};
            my $n = sysread $fh, $job->{bytes}, $READ_SIZE, length $job->{bytes};
            next if !defined $n && $!{EINTR};
            next if $n;
            close $fh;
            delete $running->{$pid};
            waitpid $pid, 0;
            my $status = $?;
            my $result = length $job->{bytes} ? eval { Storable::thaw($job->{bytes}) } : undef;
            fail("a worker process ended without its result (exit status " . ($status >> 8)
                 . ($status & 127 ? ', signal ' . ($status & 127) : '') . ')') unless $result;
            die $result->{error} if exists $result->{error};
            $job->{done}->($result->{ok}) if $job->{done};
            return;
        }
    }
}

# Children still running when the work is given up are stopped.
sub DESTROY {
    my ($self) = @_;
    return unless $self->{owner} == $$;
    for my $pid (keys %{ $self->{running} || {} }) {
        kill 'TERM', $pid;
        waitpid $pid, 0;
    }
    return;
}


# $data with every number that was also used as a string (printed, say)
# a number again: Storable would carry such a scalar as its string, and
# --json would then print it quoted, as the parent's own figures are not.
sub _plain_numbers {
    my ($data) = @_;
    my $type = ref $data;
    if ($type eq 'HASH') {
        $_ = _plain_numbers($_) for values %$data;
    }
    elsif ($type eq 'ARRAY') {
        $_ = _plain_numbers($_) for @$data;
    }
    elsif (!$type && defined $data) {
        my $flags = B::svref_2object(\$data)->FLAGS;
        return 0 + $data if $flags & (B::SVp_IOK() | B::SVp_NOK()) && $flags & B::SVp_POK()
                         && $data eq 0 + $data;
    }
    return $data;
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Workers - cmrx-dict's work on several cores: each prefix tuned in a process of its own

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::Workers qw(cores);

    my $workers = Cache::Memcached::RustXS::Dict::Workers->new(jobs => cores());
    my %square;
    for my $n (1 .. 4) {
        $workers->run(sub { return { n => $n, square => $n * $n } },     # in a child
                      sub { my ($r) = @_; $square{ $r->{n} } = $r->{square} });   # here
    }
    $workers->wait_all;
    print join(',', map { $square{$_} } 1 .. 4), "\n";    # 1,4,9,16

=head1 DESCRIPTION

C<cmrx-dict> tunes prefixes one a process, C<--jobs> of them at once (the
machine's cores by default): each child sees the values it is given as
the parent holds them, and its memory (the values measured, every
candidate dictionary loaded) goes back to the system when it ends, so
that the command's memory depends on the prefixes tuned at once, not on
how many were. A child's result comes back through a pipe (L<Storable>):
data only, no code references.

=head1 FUNCTIONS AND METHODS

=over 4

=item cores

The processors the machine has online (1 when it cannot tell).

=item Cache::Memcached::RustXS::Dict::Workers->new(jobs => $n)

At most C<$n> children at once (the cores by default).

=item $workers->run(sub { ... return $result }, sub { my ($result) = @_; ... })

Runs the first function in a new child, once fewer than C<jobs> run
(waiting for one to finish first, its second function called); the
second is called here with what the first returned. An error the child
dies with dies here, as it was (a L<Cache::Memcached::RustXS::Dict/Cache::Memcached::RustXS::Dict::Error>
keeps its kind); a child that ends without a result fails.

=item $workers->wait_all

Waits for every child, calling their second functions.

=item jobs, running

The most run at once; how many run now.

=back

Children still running when the object goes away (an error) are stopped.

=head1 SEE ALSO

L<cmrx-dict>'s C<--jobs>; L<Cache::Memcached::RustXS::Dict::Tune>, what
each child runs.

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
